// Owns the front-ends' HTTP request metrics.
import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../../shared/metrics';

export function httpMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      // The route template, never the raw path: raw paths would create a series per URL.
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
