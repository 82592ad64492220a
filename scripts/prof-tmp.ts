import { benchStack, load, selfieBody } from './bench/api';
(async () => {
  const { body } = await selfieBody();
  const stack = await benchStack('prof');
  stack.env.NODE_OPTIONS = '--cpu-prof --cpu-prof-dir=/tmp/hotpath-prof';
  try {
    await stack.spawn('liveness-api');
    await stack.spawn('liveness-worker');
    const r = await load([stack.apis[0]!.port], stack.key, body, 4, 10);
    console.log(r);
  } finally {
    await stack.close();
  }
  process.exit(0);
})();
