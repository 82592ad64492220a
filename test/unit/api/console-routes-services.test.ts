import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../../shared/paths';

const ROUTES = path.join(projectRoot, 'api', 'console', 'routes');

describe('console routes call services', () => {
  it('no route in api/console/routes/ reaches Redis or MongoDB itself (d.redis, d.models, ioredis, mongoose)', () => {
    const offenders = fs
      .readdirSync(ROUTES)
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /\bd\.(redis|models)\b|from '(ioredis|mongoose)'/.test(fs.readFileSync(path.join(ROUTES, f), 'utf8')))
      .sort();
    expect(offenders).to.deep.equal([]);
  });
});
