export { RelqBullBoardAdapter } from './relq-adapter.js';
