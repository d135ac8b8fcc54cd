import { FULL_ACCESS, type Grant, grants, SCOPES } from '../../core/scopes';
import { TOOLS, toolsFor } from '../../packages/mcp/src/catalog';
import { holds } from '../../packages/mcp/src/scopes';

describe('the MCP server\'s scope rule', () => {
  it('holds() answers as the service\'s grants() for every held grant and every needed scope', () => {
    const every: Grant[] = [...SCOPES, FULL_ACCESS];
    for (const held of every) {
      for (const needed of SCOPES) expect([held, needed, holds([held], needed)]).toEqual([held, needed, grants([held], needed)]);
    }
  });

  it('every tool names scopes the service knows, and a full-access key gets every tool', () => {
    for (const tool of TOOLS) {
      if (tool.access !== 'any-key') for (const scope of tool.access) expect(SCOPES).toContain(scope);
    }
    expect(toolsFor([FULL_ACCESS])).toEqual(TOOLS);
    expect(new Set(TOOLS.map((tool) => tool.name)).size).toBe(TOOLS.length);
  });
});
