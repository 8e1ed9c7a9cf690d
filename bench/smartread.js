// The package under test, loaded once for the drivers and the cold trials. An addon that fails
// to load makes what needs it a skip with a reason, not a crash.
'use strict';

let smartread = null;
let smartreadError = null;
try {
  smartread = require('smartread');
} catch (err) {
  smartreadError = err;
}

/** true when smartread loaded, else why not (first line of the error). */
function smartreadLoaded() {
  return smartread !== null || `smartread did not load: ${smartreadError.message.split('\n')[0]}`;
}

/** true when smartread's io_uring engine is usable here, else why not. */
function uringUsable() {
  const loaded = smartreadLoaded();
  if (loaded !== true) return loaded;
  const { uring } = smartread.engineInfo();
  return uring.available || `io_uring is not available: ${uring.reason}`;
}

/** true when the page cache can be controlled (evictFromPageCache needs the addon), else why not. */
function pageCacheControllable() {
  const loaded = smartreadLoaded();
  if (loaded !== true) return loaded;
  const info = smartread.engineInfo();
  return info.engine === 'native' || `evictFromPageCache needs the native addon (pure-JS engine in use: ${info.reason})`;
}

module.exports = { smartread, smartreadError, smartreadLoaded, uringUsable, pageCacheControllable };
