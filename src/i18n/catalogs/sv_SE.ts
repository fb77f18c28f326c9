import type { Catalog } from './index.js';

const sv_SE: Catalog = {
};

export default sv_SE;
