/* backend.c - the backend interface's contract check (core/backend.h). */
#include "core/backend.h"

hb_status hb_backend_validate(const hb_backend_ops *ops)
{
    if (!ops || ops->abi != HB_BACKEND_ABI || !ops->type || !ops->enumerate || !ops->close || !ops->supports ||
        !ops->buf_alloc || !ops->buf_free || !ops->upload || !ops->download || !ops->run)
        return HB_EINVAL;
    if (!ops->timer_begin != !ops->timer_end) return HB_EINVAL;
    return HB_OK;
}
