import type { Catalog } from './index.js';

const es_US: Catalog = {
};

export default es_US;
