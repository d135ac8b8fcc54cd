// The entry of a template render thread. A worker thread inherits neither tsx (npm scripts) nor jest's
// transform, so it registers tsx's require hook itself and then loads the TypeScript render code; the
// same file works under tsx, jest and plain node.
require('tsx/cjs/api').register();

module.exports = require('./template-render-thread.ts').default;
