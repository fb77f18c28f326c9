import type { Catalog } from './index.js';

const pl_PL: Catalog = {
};

export default pl_PL;
