declare module 'hoodiecrow-imap' {
  import type { Server } from 'node:net';

  interface Hoodiecrow {
    server: Server;
    listen(port: number, callback: () => void): void;
    close(callback: () => void): void;
  }
  export default function hoodiecrow(options: Record<string, unknown>): Hoodiecrow;
}
