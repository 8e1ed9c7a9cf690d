// smartread/fs: node:fs, with readFile, readFileSync and promises.readFile served by smartread
// (see drop_in.ts for which calls) and everything else node:fs's own.
import * as nodeFs from 'node:fs';
import { fsReaders } from './drop_in';
import fsPromises = require('./fs_promises');

// Every property of node:fs as it is defined there (its lazy getters stay getters), then ours.
const fs = Object.defineProperties({}, Object.getOwnPropertyDescriptors(nodeFs)) as typeof nodeFs;
Object.defineProperties(fs, {
  readFile: { value: fsReaders.readFile, writable: true, enumerable: true, configurable: true },
  readFileSync: { value: fsReaders.readFileSync, writable: true, enumerable: true, configurable: true },
  promises: { get: () => fsPromises, enumerable: true, configurable: true },
});

export = fs;
