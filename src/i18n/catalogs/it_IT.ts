import type { Catalog } from './index.js';

const it_IT: Catalog = {
};

export default it_IT;
