/**
 * A set-up file of every test file (vitest.config.ts): an in-memory PGlite
 * opened by the code under test (`openPglite()`: the pglite engine, `ckql
 * serve --engine pglite` and `ckql load` run in process) comes from the
 * worker's pool (test/helpers/pglite-pool.ts), emptied and checked to hold
 * what a new one holds, as the tests' own engines do. A start costs more than
 * half a second of CPU; the suite opened some twenty this way.
 */
import { lendInMemoryPglite } from '../src/engine/pglite/thread-db.js';
import { borrowPgliteDb } from './helpers/pglite-pool.js';

lendInMemoryPglite(borrowPgliteDb);
