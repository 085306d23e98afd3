/* backend.c - the backend interface's contract check (core/backend.h). */
#include "core/backend.h"

hb_status hb_backend_validate(const hb_backend_ops *ops)
{
    if (!ops || ops->abi != HB_BACKEND_ABI || !ops->type || !ops->enumerate || !ops->close || !ops->supports ||
        !ops->buf_alloc || !ops->buf_free || !ops->upload || !ops->download || !ops->run)
        return HB_EINVAL;
    if (!ops->timer_begin != !ops->timer_end) return HB_EINVAL;
    /* convert-device's pieces: all four or none */
    const int f64 = !!ops->f64_copy_in + !!ops->f64_convert_in + !!ops->f64_convert_out + !!ops->f64_copy_out;
    if (f64 != 0 && f64 != 4) return HB_EINVAL;
    return HB_OK;
}
