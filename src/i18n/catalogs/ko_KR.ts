import type { Catalog } from './index.js';

const ko_KR: Catalog = {
};

export default ko_KR;
