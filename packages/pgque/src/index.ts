export { install, installedVersion, installSql, uninstall, uninstallSql } from './install.js';
export type { Queryable } from './queryable.js';
