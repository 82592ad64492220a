// Owns the public API versions (semantic versions shown in responses and in the OpenAPI documents).
export const LIVENESS_API_VERSION = '1.0.0';
export const EMOTION_API_VERSION = '3.0.0';
