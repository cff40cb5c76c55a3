import { ErrorGate } from './error-gate';
import { StoreUnavailableError } from './errors';

describe('ErrorGate', () => {
  it('admits a cause once per interval and counts what it held back', () => {
    const gate = new ErrorGate(1000);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    expect(gate.admit(refused, 0)).toEqual({ suppressed: 0 });
    expect(gate.admit(refused, 10)).toBeNull();
    expect(gate.admit(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7000'), { code: 'ECONNREFUSED' }), 20)).toBeNull();
    expect(gate.admit(refused, 999)).toBeNull();
    expect(gate.admit(refused, 1000)).toEqual({ suppressed: 3 });
  });

  it('tells causes apart by code, by the first words of the innermost message, or by name', () => {
    const gate = new ErrorGate(1000);
    expect(gate.admit(new StoreUnavailableError(new Error('CLUSTERDOWN The cluster is down')), 0)).not.toBeNull();
    expect(gate.admit(new Error('CLUSTERDOWN The cluster is down'), 1)).toBeNull();
    expect(gate.admit(new Error('TRYAGAIN Multiple keys request during rehashing of slot'), 2)).not.toBeNull();
    expect(gate.admit(new Error('MOVED 5272 127.0.0.1:29635'), 3)).not.toBeNull();
    expect(gate.admit(new Error('MOVED 2142 127.0.0.1:29636'), 3)).toBeNull();
    expect(gate.admit(new Error('Command timed out after 5000 ms'), 3)).not.toBeNull();
    expect(gate.admit(new Error('Command timed out after 4999 ms'), 3)).toBeNull();
    expect(gate.admit('recording the run outcome again', 3)).not.toBeNull();
    expect(gate.admit('recording the run outcome again', 4)).toBeNull();
  });
});
