// smartread/fs/promises: node:fs/promises, with readFile served by smartread (see drop_in.ts for
// which calls) and everything else node:fs/promises's own.
import * as nodeFsPromises from 'node:fs/promises';
import { fsReaders } from './drop_in';

const fsPromises = Object.defineProperties({}, Object.getOwnPropertyDescriptors(nodeFsPromises)) as typeof nodeFsPromises;
Object.defineProperty(fsPromises, 'readFile', { value: fsReaders.promisesReadFile, writable: true, enumerable: true, configurable: true });

export = fsPromises;
