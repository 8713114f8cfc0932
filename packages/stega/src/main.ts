import { main } from './cli.js';

// Exit explicitly: a finished command must not linger on an open handle (an IPC channel to
// the parent, a pool a library forgot), since supervisors wait for the exit.
process.exit(await main(process.argv.slice(2)));
