// Owns the per-request context: the request id (X-Request-Id) and a child logger carrying it.
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../shared/logger';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    log: Logger;
  }
}

const SAFE_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestContext(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    // A caller's id is kept for tracing only when it is harmless; job ids are always our own UUIDs.
    req.requestId = incoming && SAFE_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.requestId);
    req.log = log.child({ requestId: req.requestId });
    next();
  };
}
