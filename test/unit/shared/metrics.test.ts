import { expect } from 'chai';
import { jobOutcomeLabel, parseRedisMemory } from '../../../shared/metrics';

describe('metrics: labels that keep alerts honest', () => {
  it('labels a finished job ok, rejected (the customer input was refused, 4xx) or error (ours, 5xx)', () => {
    expect(jobOutcomeLabel({ ok: true })).to.equal('ok');
    expect(jobOutcomeLabel({ ok: false, error: { httpStatus: 400 } })).to.equal('rejected');
    expect(jobOutcomeLabel({ ok: false, error: { httpStatus: 422 } })).to.equal('rejected');
    expect(jobOutcomeLabel({ ok: false, error: { httpStatus: 500 } })).to.equal('error');
    expect(jobOutcomeLabel({ ok: false, error: { httpStatus: 503 } })).to.equal('error');
    expect(jobOutcomeLabel({ ok: false, error: { httpStatus: 503 } }, true)).to.equal('shed');
  });

  it('reads used_memory and maxmemory from INFO memory', () => {
    const info = '# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:536870912\r\nmaxmemory_policy:noeviction\r\n';
    expect(parseRedisMemory(info)).to.deep.equal({ used: 1048576, max: 536870912 });
    expect(parseRedisMemory('# Memory\r\nused_memory_human:1.00M\r\n')).to.equal(null);
  });
});
