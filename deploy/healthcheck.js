// Docker HEALTHCHECK for every process of the image: GET $HEALTHCHECK_URL (default the liveness API's /livez),
// healthy on a 2xx within 2 s. Plain CommonJS so the runtime image runs it without a build step.
'use strict';
const url = process.env.HEALTHCHECK_URL || 'http://127.0.0.1:8080/livez';
fetch(url, { signal: AbortSignal.timeout(2000) })
  .then((res) => process.exit(res.ok ? 0 : 1))
  .catch(() => process.exit(1));
