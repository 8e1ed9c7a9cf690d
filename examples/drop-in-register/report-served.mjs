// Loaded before the app (`--import ./report-served.mjs`), so that the app's code stays as it is:
// when the app is done, prints whether node:fs was served by smartread in this thread, and how
// many reads smartread served, by what served them (its CommonJS loader's reads of app.js
// included). Under plain node it says that nothing registered.
import { engineInfo, metrics } from 'smartread';

process.on('exit', () => {
  const served = {};
  for (const [by, { reads }] of Object.entries(metrics().strategies)) {
    if (reads > 0) served[by] = reads;
  }
  console.log(`smartread: ${JSON.stringify({ dropIn: engineInfo().dropIn, served })}`);
});
