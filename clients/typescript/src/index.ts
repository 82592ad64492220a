// The client package's entry: a typed client per API, generated from their OpenAPI documents (src/generated/),
// with typed errors and Retry-After honoured in one place (src/retry.ts). See docs/client.md.
export { createLivenessClient } from './liveness';
export type {
  LivenessClient,
  LivenessClientOptions,
  LivenessRequest,
  LivenessResponse,
  UsageResponse,
  LivenessHealth,
  CheckOptions,
  CallOptions,
} from './liveness';
export { createEmotionClient } from './emotion';
export type { EmotionClient, EmotionClientOptions, EmotionAnalysis, EmotionPreflight, AudioContentType, EmotionCallOptions } from './emotion';
export { ApiError } from './errors';
export type { ErrorCodeOf, TransportErrorCode } from './errors';
export type { ApiResult } from './result';
export type { RetryPolicy } from './retry';
export type { paths as LivenessPaths } from './generated/liveness';
export type { paths as EmotionPaths } from './generated/emotion';
