/**
 * smartread/fs/promises: node:fs/promises, with readFile served by smartread and everything else
 * node:fs/promises's own: `import { readFile } from 'smartread/fs/promises'`.
 *
 * @module
 */
import * as nodeFsPromises from 'node:fs/promises';
import { fsReaders } from './drop_in/drop_in';

/**
 * node:fs/promises, typed as `typeof import('node:fs/promises')`. readFile with a plain path and
 * plain options is read by smartread; any other call is node:fs/promises's own.
 */
const fsPromises = Object.defineProperties({}, Object.getOwnPropertyDescriptors(nodeFsPromises)) as typeof nodeFsPromises;
Object.defineProperty(fsPromises, 'readFile', { value: fsReaders.promisesReadFile, writable: true, enumerable: true, configurable: true });

export = fsPromises;
