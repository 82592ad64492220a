// Owns the emotion front-end's Express app: on the shared preamble (api/http/preamble.ts), the analysis route
// (route.ts, with bearer auth, CORS, fair use in seconds of audio and Server-Timing), and its error shape.
import type { Express, Request } from 'express';
import { NotFoundError, PayloadTooLargeError } from '../../shared/errors';
import { ANALYSIS_PATH } from '../../shared/contracts/http/emotion';
import { errorHandler } from '../http/error-handler';
import { emotionOpenApi, EMOTION_OPENAPI_PATH } from '../openapi/emotion-document';
import { createFrontEndApp, type PreambleDeps } from '../http/preamble';
import { cors, mountAnalysisRoute, type AnalysisRouteDeps } from './route';

export type EmotionAppDeps = PreambleDeps & AnalysisRouteDeps;

export function createEmotionApp(d: EmotionAppDeps): Express {
  // The spec's 5 s processing time-out bounds the whole request, from arrival to answer; browsers in any origin call it.
  const app = createFrontEndApp(d, {
    apiReference: { documentPath: EMOTION_OPENAPI_PATH, document: emotionOpenApi },
    helmet: { crossOriginResourcePolicy: { policy: 'cross-origin' } },
  });

  mountAnalysisRoute(app, d);

  app.use(cors, (req: Request) => {
    const hint = /^\/feelings?\/v3\/analy/.test(req.path) ? ` (the endpoint is ${ANALYSIS_PATH})` : '';
    throw new NotFoundError(`No such endpoint${hint}`);
  });
  app.use(
    errorHandler((err) => ({ error: { code: err.code, message: err.message } }), {
      bodyTooLarge: () => new PayloadTooLargeError('The audio file exceeds 10 MB (10,485,760 bytes)', 'payload_too_large'),
    }),
  );
  return app;
}
