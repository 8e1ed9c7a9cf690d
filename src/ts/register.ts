/**
 * smartread/register: `node --import smartread/register app.js` (or --require, or NODE_OPTIONS)
 * serves node:fs's readFile, readFileSync and promises.readFile by smartread in every thread
 * that loads it, before the application's own code; SMARTREAD_REGISTER=0 leaves fs alone.
 *
 * @module
 */
import { register, unregister } from './drop_in/drop_in';

register();

export { register, unregister };
export type { DropInStatus } from './drop_in/drop_in';
