import type { Catalog } from './index.js';

const fr_FR: Catalog = {
};

export default fr_FR;
