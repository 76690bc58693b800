// Entry point of `npm start`: first holds one `nextTick` record's shape (src/tick-object-shape.ts), before the
// service's modules are even loaded (their loading runs full garbage collections), then starts the service
// (src/start.ts). A module's constant lives as long as the process.
import { holdTickObjectShape } from './tick-object-shape.js';

export const tickObjectShape = holdTickObjectShape();
await import('./start.js');
