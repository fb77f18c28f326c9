import type { Catalog } from './index.js';

const es_ES: Catalog = {
};

export default es_ES;
