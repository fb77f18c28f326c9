import type { Catalog } from './index.js';

const de_DE: Catalog = {
};

export default de_DE;
