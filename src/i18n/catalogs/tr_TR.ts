import type { Catalog } from './index.js';

const tr_TR: Catalog = {
};

export default tr_TR;
