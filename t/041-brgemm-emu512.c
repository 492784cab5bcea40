/*
 * 041-brgemm-emu512: the AVX-512 tiles (blocking, edge tiles, masks,
 * packing) compiled against the portable emulation of their vector layer
 * (runtime/vec512_emu.inc), so they are checked on every CPU, including
 * those without AVX-512 where t/040 must skip them.  The real zmm build is
 * checked by t/040 on CPUs that have AVX-512.
 */
#define HGC_VEC512_EMU 1
#include "runtime/brgemm_avx512.c"

#include "t/tap.h"
#include "t/brgemm_check.h"

/* The tile table each kernel uses and what picks the column blocks. */
static void test_shapes(void)
{
	is_int(f32_tiles.nr, 4, "widest tile: 4 vectors");
	is_int(f32_tiles.mr[4], 6, "6x4");
	is_int(f32_tiles.mr[3], 8, "8x3");
	is_int(f32_tiles.mr[1], 16, "16x1");
	is_int(pick_nr(&f32_tiles, 4), 4, "64 columns: 6x4");
	is_int(pick_nr(&f32_tiles, 3), 3, "48 columns: 8x3");
	is_int(pick_nr(&f32_tiles, 6), 3, "96 columns: 8x3 twice");
	is_int(pick_nr(&f32_tiles, 7), 4, "112 columns: 6x4 then 8x3");
	ok(f32_tiles.fn[2][12] && f32_tiles.fn[2][8] && i8_tiles.fn[4][4] && i8_tiles.fn[4][1] &&
	   bf16_tiles.fn[1][16] && !bf16_tiles.fn[1][3], "full tiles and power-of-two edge tiles");
}

/*
 * Row tiles: the 6- and 8-row tiles have edge tiles of every size below
 * them, for an even split; the 12- and 16-row ones only powers of two.
 */
static void test_rows(void)
{
	int64_t q, extra;

	row_split(&f32_tiles, 4, 64, &q, &extra);
	ok(q == 5 && extra == 9, "64 rows with 6x4: 11 tiles, 9 of 6 and 2 of 5");
	is_int(tile_rows(&f32_tiles, 4, 64, 0, q, extra), 6, "first tile: 6 rows");
	is_int(tile_rows(&f32_tiles, 4, 10, 9, q, extra), 5, "tenth tile: 5 rows");
	row_split(&f32_tiles, 4, 7, &q, &extra);
	ok(q == 3 && extra == 1, "7 rows with 6x4: 4 + 3, not 6 + 1");
	row_split(&f32_tiles, 3, 15, &q, &extra);
	ok(q == 7 && extra == 1, "15 rows with 8x3: 8 + 7");
	row_split(&f32_tiles, 4, 4, &q, &extra);
	ok(q == 4 && extra == 0, "4 rows: one tile of 4");
	row_split(&f32_tiles, 2, 24, &q, &extra);
	ok(q == 12 && extra == 0, "24 rows with 12x2: 12 and 12");
	is_int(tile_rows(&f32_tiles, 2, 12, 1, q, extra), 12, "second tile: 12 rows");
	row_split(&f32_tiles, 1, 40, &q, &extra);
	ok(q == 16 && extra == -1, "40 rows with 16x1: no 13-row tile, so full tiles first");
	is_int(tile_rows(&f32_tiles, 1, 8, 2, q, extra), 8, "8 rows left: one 8-row tile");
	is_int(tile_rows(&f32_tiles, 1, 3, 3, q, extra), 2, "3 rows left: 2 + 1");
}

int main(void)
{
	static const enum form direct[] = {FORM_DIRECT};
	static hgc_rt_kernel_fn *const kern[HGC_RT_NKIND] = {
		hgc_rt_f32_avx512_emu, hgc_rt_u8s8_avx512_emu, hgc_rt_bf16_avx512_emu};
	static const char *const names[HGC_RT_NKIND] = {"f32", "u8s8s32 (vpdpbusd)",
							"bf16 (vdpbf16ps)"};
	char err[400] = "";
	int k, fails;

	test_shapes();
	test_rows();
	for (k = 0; k < HGC_RT_NKIND; k++) {
		fails = sweep((enum hgc_rt_kind)k, direct, 1, kern[k], 0, 1, err, sizeof(err));
		if (!ok(fails == 0, "emulated avx512 %s: 128 shapes, bs 1-4, beta 0/1", names[k]))
			diag("%d failed; first: %s", fails, err);
		fails = strip_cases((enum hgc_rt_kind)k, FORM_DIRECT, kern[k], err, sizeof(err));
		if (!ok(fails == 0, "emulated avx512 %s: strips of column blocks", names[k]))
			diag("%d failed; first: %s", fails, err);
	}
	/* the C tiles' post-ops (each tile after its store), in the call given */
	post_mode = POST_BIAS | POST_RELU;
	fails = sweep(HGC_RT_F32, direct, 1, kern[0], 0, 1, err, sizeof(err));
	fails += strip_cases(HGC_RT_F32, FORM_DIRECT, kern[0], err, sizeof(err));
	post_mode = 0;
	if (!ok(fails == 0, "emulated avx512 f32 with bias and ReLU: the shapes and the strips"))
		diag("%d failed; first: %s", fails, err);
	return done_testing();
}
