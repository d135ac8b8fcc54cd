import { siblingQueue, taskQueueName } from '../../core/task-queues';

describe('siblingQueue', () => {
  it('a prefixed control queue → the bulk queue of the same prefix', () => {
    expect(siblingQueue(taskQueueName('acme-', 'control'), 'control', 'bulk')).toBe('acme-bulk');
    expect(siblingQueue('control', 'control', 'bulk')).toBe('bulk');
  });

  it('any other queue (a test\'s single queue) → itself', () => {
    expect(siblingQueue('test-1234', 'control', 'bulk')).toBe('test-1234');
  });
});
