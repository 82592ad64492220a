// Owns the per-request context: the request id and a child logger carrying it. The request id is always a
// server-generated UUID: it names the job, the reservation, the commit, the usage event and the result key,
// so no caller can pick or collide with it. A caller's own X-Request-Id, when harmless, is kept as
// clientRequestId for tracing (logs) and echoed back in X-Client-Request-Id; it is never a key.
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../shared/logger';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    /** The caller's X-Request-Id when it matches SAFE_CLIENT_ID; for logs and the echo header only. */
    clientRequestId?: string;
    log: Logger;
  }
}

const SAFE_CLIENT_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.requestId = randomUUID();
    const incoming = req.get('x-request-id');
    if (incoming && SAFE_CLIENT_ID.test(incoming)) {
      req.clientRequestId = incoming;
      res.setHeader('X-Client-Request-Id', incoming);
    }
    res.setHeader('X-Request-Id', req.requestId);
    req.log = log.child(req.clientRequestId ? { requestId: req.requestId, clientRequestId: req.clientRequestId } : { requestId: req.requestId });
    next();
  };
}
