import type { Catalog } from './index.js';

const uk_UA: Catalog = {
};

export default uk_UA;
