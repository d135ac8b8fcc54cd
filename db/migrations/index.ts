import * as foundation from './0001-foundation';

/** Migrations in order. Listed by hand rather than globbed, so they run the same under tsx, jest and a bundle. */
export const migrations = [{ name: '0001-foundation', ...foundation }];
