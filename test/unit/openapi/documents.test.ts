import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import { OPENAPI_KEYWORDS } from '../../support/openapi';
import { livenessOpenApi } from '../../../api/openapi/liveness-document';
import { emotionOpenApi } from '../../../api/openapi/emotion-document';
import { LIVENESS_ERROR_CODES, QUALITY_REASONS } from '../../../shared/contracts/http/liveness';
import { EMOTION_ERROR_CODES } from '../../../shared/contracts/http/emotion';
import type { QualityReason } from '../../../workers/liveness/engine/quality';

// Compile-time guard: the engine's quality reasons and the public enum cannot drift apart silently. (The job
// result schemas extend the public ones in shared/queues/contracts.ts, so their fields cannot drift at all.)
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const reasonsMatch: Same<QualityReason, (typeof QUALITY_REASONS)[number]> = true;

const documents: Array<[string, () => OpenAPIObject, Record<number, readonly string[]>]> = [
  ['liveness', livenessOpenApi, LIVENESS_ERROR_CODES],
  ['emotion', emotionOpenApi, EMOTION_ERROR_CODES],
];

describe('OpenAPI documents', () => {
  it("keep the engine's quality reasons and the public enum in step (checked by the type checker)", () => {
    expect(reasonsMatch).to.equal(true);
  });

  for (const [name, build, codes] of documents) {
    describe(`the ${name} API`, () => {
      it('validates as OpenAPI 3.1 against the official schema', async () => {
        const validator = new Validator();
        const res = await validator.validate(structuredClone(build()) as unknown as Parameters<Validator['validate']>[0]);
        expect(res.errors ?? [], JSON.stringify(res.errors, null, 2)).to.deep.equal([]);
        expect(res.valid).to.equal(true);
        expect(validator.version).to.equal('3.1');
      });

      it('compiles every schema under ajv strict mode, and every example matches its schema', () => {
        const doc = build();
        const ajv = new Ajv2020({ strict: true, allErrors: true });
        addFormats(ajv);
        ajv.addVocabulary(OPENAPI_KEYWORDS);
        ajv.addSchema(doc, name);
        let examples = 0;
        for (const [path, item] of Object.entries(doc.paths ?? {})) {
          for (const [method, op] of Object.entries(
            item as Record<
              string,
              {
                responses?: Record<
                  string,
                  { content?: Record<string, { schema?: unknown; example?: unknown; examples?: Record<string, { value: unknown }> }> }
                >;
              }
            >,
          )) {
            for (const [status, response] of Object.entries(op.responses ?? {})) {
              for (const [media, mt] of Object.entries(response.content ?? {})) {
                if (!mt.schema) continue;
                const pointer = ['paths', path, method, 'responses', status, 'content', media, 'schema']
                  .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
                  .join('/');
                const validate = ajv.getSchema(`${name}#/${pointer}`)!;
                const values = [...(mt.example !== undefined ? [mt.example] : []), ...Object.values(mt.examples ?? {}).map((e) => e.value)];
                for (const v of values) {
                  examples++;
                  expect(validate(v), `${method} ${path} ${status} example: ${ajv.errorsText(validate.errors)}`).to.equal(true);
                }
              }
            }
          }
        }
        expect(examples).to.be.greaterThan(10);
      });

      it('documents every error code of the contract, with an example each', () => {
        const text = JSON.stringify(build());
        for (const list of Object.values(codes)) for (const code of list) expect(text, code).to.include(`"examples":`).and.include(`"${code}":{`);
      });
    });
  }
});
