import { useWorkflowBundle } from '../../workers/workflow-bundle';

// The run's workflow bundle, built once from the current sources by test/jest-global-setup.ts: workers in
// this test file load it instead of each running webpack.
const codePath = process.env.TEST_WORKFLOW_BUNDLE;
if (codePath) useWorkflowBundle({ codePath });
