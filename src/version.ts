// Only the `version` field is bundled: esbuild tree-shakes named imports from JSON.
import { version } from '../package.json';

export const VERSION: string = version;
