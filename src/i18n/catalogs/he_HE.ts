import type { Catalog } from './index.js';

const he_HE: Catalog = {
};

export default he_HE;
