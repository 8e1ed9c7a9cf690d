// The readers being compared. A driver is
//   { name, available(), read(path), baseline?, async? }
// available() returns true, or a string saying why the driver is skipped on this machine (an
// addon that did not load, a kernel without io_uring, ...). read(path) reads one whole file and
// returns its Buffer, or a Promise of it when `async` is true. Exactly one driver is the
// baseline: every other driver's result is checked against its result before anything is
// timed, and every ratio in a report is against it.
'use strict';
const fs = require('node:fs');

// Loaded once, here: an addon that fails to load makes its drivers skips with a reason, not a crash.
let smartread = null;
let smartreadError = null;
try {
  smartread = require('smartread');
} catch (err) {
  smartreadError = err;
}

const drivers = [
  {
    name: 'fs.readFileSync',
    baseline: true,
    available: () => true,
    read: (path) => fs.readFileSync(path),
  },
  {
    name: 'smartReadSync',
    available: () => smartread !== null || `smartread did not load: ${smartreadError.message.split('\n')[0]}`,
    read: (path) => smartread.smartReadSync(path),
  },
];

module.exports = { drivers, smartread, smartreadError };
