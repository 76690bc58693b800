// Graceful shutdown as load balancers expect it. On SIGTERM the instance first drains: it keeps accepting and
// answering (a balancer may still route to it until its health checks notice), readiness answers 503, and every
// response carries `Connection: close` (src/http/server.ts) so keep-alive clients reconnect elsewhere. Only then does
// the listener close.

export interface Lifecycle {
  draining: boolean;
}
