import type { Catalog } from './index.js';

const kk_KZ: Catalog = {
};

export default kk_KZ;
