// The largest result a read may produce: what a Buffer can hold (buffer.constants.MAX_LENGTH).
import { constants as bufferConstants } from 'node:buffer';

/**
 * Test-only: SMARTREAD_TEST_MAX_LENGTH=N lowers the limit to N bytes (never raises it), so that
 * tests can see an endless file (/dev/zero) stop with ERR_FS_FILE_TOO_LARGE without first
 * reading 4 GiB. Not for production use (see docs/RELIABILITY.md).
 */
function testMaxLength(): number | undefined {
  const value = process.env.SMARTREAD_TEST_MAX_LENGTH;
  if (value === undefined || !/^[1-9][0-9]*$/.test(value)) return undefined;
  const n = Number(value);
  return n < bufferConstants.MAX_LENGTH ? n : undefined;
}

export const maxReadLength: number = testMaxLength() ?? bufferConstants.MAX_LENGTH;
