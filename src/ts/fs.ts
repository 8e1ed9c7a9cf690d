/**
 * smartread/fs: node:fs, with readFile, readFileSync and promises.readFile served by smartread
 * and everything else node:fs's own: `import fs from 'smartread/fs'`.
 *
 * @module
 */
import * as nodeFs from 'node:fs';
import { fsReaders } from './drop_in/drop_in';
import fsPromises = require('./fs_promises');

// Every property of node:fs as it is defined there (its lazy getters stay getters), then ours.
/**
 * node:fs, typed as `typeof import('node:fs')`. A call with a plain path (string, Buffer or
 * `file:` URL) and plain options (an encoding, or `{ encoding, flag: 'r' }`) is read by
 * smartread; any other call, and any read smartread could not complete, is node:fs's own.
 */
const fs = Object.defineProperties({}, Object.getOwnPropertyDescriptors(nodeFs)) as typeof nodeFs;
Object.defineProperties(fs, {
  readFile: { value: fsReaders.readFile, writable: true, enumerable: true, configurable: true },
  readFileSync: { value: fsReaders.readFileSync, writable: true, enumerable: true, configurable: true },
  promises: { get: () => fsPromises, enumerable: true, configurable: true },
});

export = fs;
