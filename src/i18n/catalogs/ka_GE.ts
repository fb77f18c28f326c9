import type { Catalog } from './index.js';

const ka_GE: Catalog = {
};

export default ka_GE;
