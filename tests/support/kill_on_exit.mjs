// killOnExit(child): the child process a node test driver started is killed
// (SIGKILL) when the driver exits, however it exits: a thrown assertion, an
// uncaught error, process.exit. A server left behind keeps running, keeps
// its port, and, when it shares the driver's stderr, holds ctest's output
// pipe open, so a failure became a hang until the ctest timeout (Session 16,
// docs/SECURITY.md). Returns the child, so a spawn can be wrapped in place:
//
//   import { killOnExit } from '../support/kill_on_exit.mjs';
//   const proxy = killOnExit(spawn(BIN, ['proxy', ...], { stdio: ... }));
//
// A child that exits on its own is forgotten. Not covered: a driver killed
// by a signal it does not handle (SIGKILL, or ctest's own timeout) runs no
// 'exit' handler.
const children = new Set();
let hooked = false;

export function killOnExit(child) {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const c of children) {
        try { c.kill('SIGKILL'); } catch { /* already gone */ }
      }
    });
  }
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}
