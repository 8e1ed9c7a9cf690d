// The targets: directories the trials write their files into, each on some device and
// filesystem. A target is described by the mount that holds its real path.
'use strict';
const fs = require('node:fs');
const os = require('node:os');

/** os.tmpdir() (the disk here), and /dev/shm (memory) where it exists. */
function defaultTargetDirs() {
  const dirs = [os.tmpdir()];
  if (fs.existsSync('/dev/shm')) dirs.push('/dev/shm');
  return dirs;
}

// /proc/self/mounts writes space, tab, newline and backslash in paths as octal escapes.
function unescapeMountField(field) {
  return field.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));
}

function readMounts() {
  try {
    return fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').filter(Boolean).map((line) => {
      const [source, mountPoint, fsType] = line.split(' ').map(unescapeMountField);
      return { source, mountPoint, fsType };
    });
  } catch {
    return [];
  }
}

function isUnder(file, dir) {
  return dir === '/' || file === dir || file.startsWith(`${dir}/`);
}

/**
 * { dir, realpath, fsType, mountPoint, source } for a directory: the mount with the longest
 * mount point that contains its real path; of mounts stacked on the same point, the last
 * (the visible one). Throws when the directory does not exist.
 */
function describeTarget(dir) {
  const realpath = fs.realpathSync(dir);
  if (!fs.statSync(realpath).isDirectory()) throw new Error(`not a directory: ${dir}`);
  let best = null;
  for (const mount of readMounts()) {
    if (isUnder(realpath, mount.mountPoint) && (!best || mount.mountPoint.length >= best.mountPoint.length)) {
      best = mount;
    }
  }
  return {
    dir,
    realpath,
    fsType: best ? best.fsType : 'unknown',
    mountPoint: best ? best.mountPoint : null,
    source: best ? best.source : null,
  };
}

module.exports = { defaultTargetDirs, describeTarget };
