// node:fs's whole-file readers as they were when smartread loaded. smartread reads through these
// and never through the module object: smartread/register (or a user's own patch) replaces the
// module's functions with smartread, and a call from inside smartread would then come back into
// smartread, and wait on itself (see test/drop-in-reentry.test.js).
import * as fs from 'node:fs';

export const originalReadFile: typeof fs.readFile = fs.readFile;
export const originalReadFileSync: typeof fs.readFileSync = fs.readFileSync;
export const originalPromisesReadFile: typeof fs.promises.readFile = fs.promises.readFile;
