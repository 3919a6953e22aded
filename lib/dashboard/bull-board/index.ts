/**
 * relq/dashboard/bull-board: relq queues in Bull Board (docs/dashboard.md). Promised:
 * RelqBullBoardAdapter. test/packaging/surface.spec.ts holds the exact list.
 */
export { RelqBullBoardAdapter } from './relq-adapter.js';
