import { expect } from 'chai';
import { http } from '../../support/http';
import { startLivenessStack, type LivenessStack } from '../../support/liveness-stack';
import { startEmotionStack, type EmotionStack } from '../../support/emotion-stack';
import { livenessOpenApi } from '../../../api/openapi/liveness-document';
import { emotionOpenApi } from '../../../api/openapi/emotion-document';
import { DOCS_CSP } from '../../../api/openapi/serve';

describe('The API references: OpenAPI documents and /docs on each port', () => {
  let liveness: LivenessStack;
  let emotion: EmotionStack;

  before(async () => {
    liveness = await startLivenessStack('openapi-served', { withWorker: false });
    emotion = await startEmotionStack('openapi-served', { withWorker: false });
  });
  after(async () => {
    await liveness?.stop();
    await emotion?.stop();
  });

  it('serves GET /v1/openapi.json: the liveness document, readable from any origin', async () => {
    const res = await http(liveness.api.port, '/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(livenessOpenApi())));
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    const post = await http(liveness.api.port, '/v1/openapi.json', { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET');
  });

  it('serves GET /feelings/v3/openapi.json: the emotion document', async () => {
    const res = await emotion.request('/feelings/v3/openapi.json');
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal(JSON.parse(JSON.stringify(emotionOpenApi())));
  });

  for (const [name, port, documentPath] of [
    ['liveness', () => liveness.api.port, '/v1/openapi.json'],
    ['emotion', () => emotion.api.port, '/feelings/v3/openapi.json'],
  ] as const) {
    it(`serves the ${name} reference page at /docs with the renderer from our own origin, under its own CSP`, async () => {
      const page = await http(port(), '/docs');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expect(page.headers.get('content-security-policy')).to.equal(DOCS_CSP);
      expect(page.text).to.include(`spec-url="${documentPath}"`).and.include('<script src="/docs/redoc.standalone.js"></script>');
      expect(page.text).to.not.match(/https?:\/\//);
      const bundle = await http(port(), '/docs/redoc.standalone.js');
      expect(bundle.status).to.equal(200);
      expect(bundle.headers.get('content-type')).to.match(/^application\/javascript/);
      expect(bundle.text.length).to.be.greaterThan(500_000);
    });
  }

  it("leaves every other route's policy as it was: the API's helmet defaults", async () => {
    const res = await http(liveness.api.port, '/v1/openapi.json');
    expect(res.headers.get('content-security-policy')).to.be.a('string').and.not.equal(DOCS_CSP).and.not.include('blob:');
  });
});
