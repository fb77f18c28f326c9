import type { Catalog } from './index.js';

const pt_BR: Catalog = {
};

export default pt_BR;
